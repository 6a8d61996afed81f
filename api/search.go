package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/hub"
	"albedo/wire"
)

// search serves GET /v1/search?q=TEXT[&session=ID][&limit=N][&after=CURSOR]:
// the messages holding TEXT that the token may read, newest first
// (hub.Search; docs/protocol.md, Search).
func (s *Server) search(c echo.Context) error {
	limit, err := queryInt(c, "limit", hub.DefaultSearchLimit)
	if err != nil {
		return err
	}
	if limit < 1 || limit > hub.MaxSearchLimit {
		return wire.Errorf(wire.CodeBadRequest, "limit must be 1 to %d", hub.MaxSearchLimit)
	}
	pr, _ := principalOf(c)
	res, err := s.hub.Search(c.Request().Context(), pr, c.QueryParam("q"), c.QueryParam("session"), c.QueryParam("after"), int(limit))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}
