package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// compact compacts a session by hand (POST /v1/sessions/{id}/compact):
// 201 with the compaction event.
func (s *Server) compact(c echo.Context) error {
	p, _ := principalOf(c)
	ev, err := s.hub.Compact(c.Request().Context(), p, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, ev)
}
