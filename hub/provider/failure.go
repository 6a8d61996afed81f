package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// endpoint is what a provider's failures name: its profile, where it
// answers, and how long it may be silent.
type endpoint struct {
	name, baseURL string
	idle          time.Duration
}

// failure words a stream's end for the person reading the transcript: nil
// for none; ctx's error when our side interrupted it (sctx is the
// stream's own context, cancelled with errIdle on silence). apiStatus
// reads an HTTP error of the provider's SDK (status, message, ok).
func (e endpoint) failure(ctx, sctx context.Context, err error, model string, apiStatus func(error) (int, string, bool)) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err() // interrupted by our side: not the provider's fault
	case errors.Is(context.Cause(sctx), errIdle):
		return fmt.Errorf("provider %q sent nothing for %s; is %s up?", e.name, e.idle, e.baseURL)
	}
	if status, msg, ok := apiStatus(err); ok {
		if msg == "" {
			msg = http.StatusText(status)
		}
		return fmt.Errorf("provider %q answered HTTP %d: %s%s", e.name, status, msg, statusHint(status, model))
	}
	if why, ok := unreachable(err); ok {
		return fmt.Errorf("profile %q: nothing answers at %s (%s): check its base_url in config.toml", e.name, e.baseURL, why)
	}
	return fmt.Errorf("provider %q: the reply stream broke: %v", e.name, err)
}

// statusHint says what to check after an HTTP error of a provider.
func statusHint(status int, model string) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "; check the key in api_key_env"
	case status == http.StatusNotFound:
		return fmt.Sprintf("; check base_url and the model %q", model)
	case status == http.StatusTooManyRequests || status >= 500:
		return "; try again later"
	}
	return ""
}
