package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"albedo/wire"
)

// AllEvents calls fn with every event of session id, oldest first, each as
// the daemon sent it and decoded, paging through the whole history (pages
// of up to 1000 events, as the daemon allows). Events committed while it
// pages are included up to the last page.
func (c *Client) AllEvents(ctx context.Context, id string, fn func(raw json.RawMessage, ev wire.Event) error) error {
	var after int64
	for {
		q := url.Values{"after": {strconv.FormatInt(after, 10)}, "limit": {"1000"}}
		var p struct {
			Events []json.RawMessage `json:"events"`
			More   bool              `json:"more"`
		}
		if _, err := c.call(ctx, http.MethodGet, sessPath(id)+"/events?"+q.Encode(), nil, nil, &p, true); err != nil {
			return err
		}
		for _, raw := range p.Events {
			var ev wire.Event
			if err := json.Unmarshal(raw, &ev); err != nil {
				return fmt.Errorf("decode event after offset %d: %w", after, err)
			}
			if err := fn(raw, ev); err != nil {
				return err
			}
			after = ev.Offset
		}
		// A page that brought nothing cannot move on, whatever it says.
		if !p.More || len(p.Events) == 0 {
			return nil
		}
	}
}
