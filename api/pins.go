package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// pin serves PUT /v1/sessions/{id}/pin: the caller pins the session.
func (s *Server) pin(c echo.Context) error { return s.setPin(c, true) }

// unpin serves DELETE /v1/sessions/{id}/pin.
func (s *Server) unpin(c echo.Context) error { return s.setPin(c, false) }

func (s *Server) setPin(c echo.Context, pin bool) error {
	pr, _ := principalOf(c)
	if err := s.hub.Pin(c.Request().Context(), pr, c.Param("id"), pin); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// pins serves GET /v1/me/pins: the sessions the caller pinned, the first
// pinned first.
func (s *Server) pins(c echo.Context) error {
	pr, _ := principalOf(c)
	ids, err := s.hub.Pinned(c.Request().Context(), pr)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.Pins{Sessions: append([]string{}, ids...)})
}
