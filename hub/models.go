package hub

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"albedo/hub/provider"
	"albedo/wire"
)

// A model picker's list: the models a provider's API lists, read at most
// once per modelsFresh for each provider as configured now (a reload's
// provider is another).

// modelsFresh is how long a provider's list is served before it is read
// again; modelsWait how long a read may take.
const (
	modelsFresh = 10 * time.Minute
	modelsWait  = 10 * time.Second
)

// modelLists caches the lists, by provider.
type modelLists struct {
	mu sync.Mutex
	m  map[provider.Provider]modelList
}

type modelList struct {
	at     time.Time
	models []wire.ModelInfo
}

// Models lists the models provider name ("" for the default) serves.
func (h *Hub) Models(ctx context.Context, name string) (wire.Models, error) {
	name = cmp.Or(name, h.providers.Default())
	p, err := h.providers.Get(name)
	if err != nil {
		return wire.Models{}, wire.Errorf(wire.CodeNotFound, "%v", err)
	}
	l, ok := p.(provider.Lister)
	if !ok {
		return wire.Models{}, wire.Errorf(wire.CodeBadRequest, "provider %s lists no models: echo, bots and coding agents have none to choose", name)
	}
	out := wire.Models{Provider: name}
	if w, ok := p.(provider.Windowed); ok {
		out.Default = w.Model(provider.Request{})
	}
	h.models.mu.Lock()
	c, ok := h.models.m[p]
	h.models.mu.Unlock()
	if ok && time.Since(c.at) < modelsFresh {
		out.Models = c.models
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, modelsWait)
	defer cancel()
	ms, err := l.Models(ctx)
	if err != nil {
		return wire.Models{}, &wire.Error{Code: wire.CodeUnavailable, Retryable: true,
			Message: fmt.Sprintf("%s's list of models could not be read (%v); a model's name can still be typed", name, err)}
	}
	h.models.mu.Lock()
	if h.models.m == nil || len(h.models.m) >= 64 {
		h.models.m = map[provider.Provider]modelList{} // bounded: reloads make new providers
	}
	h.models.m[p] = modelList{at: time.Now(), models: ms}
	h.models.mu.Unlock()
	out.Models = ms
	return out, nil
}
