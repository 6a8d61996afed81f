package provider

import (
	"context"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"albedo/wire"
)

// Lister is a provider whose API lists the models it serves (OpenAI's
// and OpenAI-compatible servers' GET /models, Anthropic's GET
// /v1/models), for a model picker.
type Lister interface {
	Models(ctx context.Context) ([]wire.ModelInfo, error)
}

// Prefiller is a provider whose API continues an assistant message
// given last (a reply cut off, run on: hub's continue.go).
type Prefiller interface {
	Prefills() bool
}

// MaxModels bounds a provider's list of models.
const MaxModels = 1000

// Models implements Lister: the endpoint's GET /models, by id.
func (o *OpenAI) Models(ctx context.Context) ([]wire.ModelInfo, error) {
	page, err := o.client.Models.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]wire.ModelInfo, 0, min(len(page.Data), MaxModels))
	for _, m := range page.Data[:min(len(page.Data), MaxModels)] {
		out = append(out, wire.ModelInfo{ID: m.ID})
	}
	slices.SortFunc(out, func(a, b wire.ModelInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Models implements Lister: Anthropic's models, newest first, with their
// display names.
func (a *Anthropic) Models(ctx context.Context) ([]wire.ModelInfo, error) {
	page, err := a.client.Models.List(ctx, anthropic.ModelListParams{Limit: anthropic.Int(MaxModels)})
	if err != nil {
		return nil, err
	}
	out := make([]wire.ModelInfo, 0, min(len(page.Data), MaxModels))
	for _, m := range page.Data[:min(len(page.Data), MaxModels)] {
		out = append(out, wire.ModelInfo{ID: m.ID, Name: m.DisplayName})
	}
	return out, nil
}
