package api

import (
	"context"
	"net/http"

	"albedo/api/ws"
	"albedo/wire"

	"github.com/labstack/echo/v4"
)

// Owner-only routes for tokens; their shape is in docs/protocol.md.

type botCreate struct {
	Name     string   `json:"name"`
	Sessions []string `json:"sessions,omitempty"`
}

func (s *Server) addBot(c echo.Context) error {
	var req botCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	tok, err := s.hub.AddBot(c.Request().Context(), req.Name, req.Sessions)
	if err != nil {
		return err
	}
	noStore(c)
	return c.JSON(http.StatusCreated, map[string]any{"name": req.Name, "token": tok, "sessions": req.Sessions,
		"ws_url": wsURL(c.Request())})
}

func (s *Server) listBots(c echo.Context) error {
	bots, err := s.hub.Bots(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"bots": bots})
}

func (s *Server) listProviders(c echo.Context) error {
	return c.JSON(http.StatusOK, s.hub.Providers())
}

// listModels serves GET /v1/providers/{name}/models: what a model picker
// offers for a provider's sessions.
func (s *Server) listModels(c echo.Context) error {
	ms, err := s.hub.Models(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ms)
}

func (s *Server) removeBot(c echo.Context) error {
	ids, err := s.hub.RemoveBot(c.Request().Context(), c.Param("name"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(ids, ws.StatusBadToken, "token revoked")
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) share(c echo.Context) error {
	var req wire.LinkCreate
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	tok, link, err := s.hub.Share(c.Request().Context(), c.Param("id"), req)
	if err != nil {
		return err
	}
	noStore(c)
	return c.JSON(http.StatusCreated, wire.LinkCreated{Link: link, Token: tok, WSURL: wsURL(c.Request())})
}

func (s *Server) listLinks(c echo.Context) error {
	ls, err := s.hub.Links(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"links": ls})
}

func (s *Server) unlink(c echo.Context) error {
	ids, err := s.hub.Unlink(c.Request().Context(), c.Param("id"), c.Param("label"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(ids, ws.StatusBadToken, "token revoked")
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) unshare(c echo.Context) error {
	ids, err := s.hub.Unshare(c.Request().Context(), c.Param("id"))
	if err != nil {
		return err
	}
	s.ws.CloseTokens(ids, ws.StatusBadToken, "token revoked")
	return c.NoContent(http.StatusNoContent)
}

// ReloadTokens makes the daemon's tokens what the store holds
// (hub.ReloadTokens): tokens made by `albedo tokens add` are accepted, and
// the websockets of tokens removed from the store are closed with 4401.
// It returns how many tokens were revoked. The daemon calls it on SIGHUP.
func (s *Server) ReloadTokens(ctx context.Context) (int, error) {
	ids, err := s.hub.ReloadTokens(ctx)
	if err != nil {
		return 0, err
	}
	s.ws.CloseTokens(ids, ws.StatusBadToken, "token revoked")
	return len(ids), nil
}
