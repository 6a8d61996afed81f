package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/api/ws"
	"albedo/wire"
)

// Owner tokens over the API (owner only). `albedo tokens` writes the store
// itself, but a daemon on SQLite holds its file for itself while it runs
// (db/walvfs), so the command asks that daemon through these routes.

type tokenCreate struct {
	Role string `json:"role"`
	Name string `json:"name"`
}

// addToken serves POST /v1/tokens: an owner token, shown only now.
func (s *Server) addToken(c echo.Context) error {
	var req tokenCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	switch wire.TokenRole(req.Role) {
	case wire.TokenOwner:
	case "":
		return wire.Errorf(wire.CodeBadRequest, "role is required: owner")
	case wire.TokenBot:
		return wire.Errorf(wire.CodeBadRequest, "bot tokens are made with POST /v1/bots")
	case wire.TokenViewer:
		return wire.Errorf(wire.CodeBadRequest, "viewer tokens are links: POST /v1/sessions/{id}/shares")
	default:
		return wire.Errorf(wire.CodeBadRequest, "role must be owner: only owner tokens are made here")
	}
	tok, err := s.hub.AddOwner(c.Request().Context(), req.Name)
	if err != nil {
		return err
	}
	noStore(c)
	return c.JSON(http.StatusCreated, map[string]any{"role": wire.TokenOwner, "name": req.Name, "token": tok})
}

// listTokens serves GET /v1/tokens: every stored token's role and name,
// never a token.
func (s *Server) listTokens(c echo.Context) error {
	ts, err := s.hub.Tokens(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"tokens": ts})
}

// removeToken serves DELETE /v1/tokens/{name}: the owner token named so is
// revoked and its websockets closed with 4401.
func (s *Server) removeToken(c echo.Context) error {
	ids, err := s.hub.RemoveOwner(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(ids, ws.StatusBadToken, "token revoked")
	return c.NoContent(http.StatusNoContent)
}
