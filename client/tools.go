package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"albedo/wire"
)

// Approvals lists the calls of a session that wait for a decision.
func (c *Client) Approvals(ctx context.Context, session string) (wire.Approvals, error) {
	var a wire.Approvals
	_, err := c.call(ctx, http.MethodGet, sessPath(session)+"/approvals", nil, nil, &a, true)
	return a, err
}

// Decide records a decision on a call: allow, allow_session or deny. The
// first decision wins; a later one is a conflict (*Error with
// wire.CodeConflict).
func (c *Client) Decide(ctx context.Context, session, callID string, d wire.Decision) (wire.Event, error) {
	var ev wire.Event
	// Not retried blind: a decision whose reply was lost would come back
	// as a conflict, which says less than the first reply did.
	_, err := c.call(ctx, http.MethodPost, sessPath(session)+"/approvals/"+url.PathEscape(callID), nil, d, &ev, false)
	return ev, err
}

// Tools lists the tools a session may call and the policy of each; ""
// lists every tool served (admins only).
func (c *Client) Tools(ctx context.Context, session string) (wire.Tools, error) {
	var t wire.Tools
	path := "/v1/tools"
	if session != "" {
		path += "?session=" + url.QueryEscape(session)
	}
	_, err := c.call(ctx, http.MethodGet, path, nil, nil, &t, true)
	return t, err
}

// ToolResult answers a call handed to OnTool: its output, or errText for
// a call that failed. It needs the connection the call came on; after a
// loss the daemon hands the call to the bot's next connection (OnTool is
// called anew) and ToolResult returns an error.
func (st *Stream) ToolResult(ctx context.Context, callID, output, errText string) error {
	st.mu.Lock()
	conn := st.conn
	st.mu.Unlock()
	if conn == nil {
		return fmt.Errorf("tool result of %s: not connected", callID)
	}
	res := make(chan wire.Reply, 1)
	conn.command(wire.Command{Op: wire.OpToolResult, CallID: callID, Output: output, Error: errText}, func(r wire.Reply) { res <- r })
	select {
	case r := <-res:
		if !r.OK {
			return r.Error
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
