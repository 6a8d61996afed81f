package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// putRead serves PUT /v1/sessions/{id}/read {"offset"}: the caller's read
// marker (hub.SetRead).
func (s *Server) putRead(c echo.Context) error {
	var in wire.ReadMark
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	pr, _ := principalOf(c)
	if err := s.hub.SetRead(c.Request().Context(), pr, c.Param("id"), in.Offset); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, in)
}

// getRead serves GET /v1/sessions/{id}/read: the caller's read marker.
func (s *Server) getRead(c echo.Context) error {
	pr, _ := principalOf(c)
	off, err := s.hub.ReadOf(c.Request().Context(), pr, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.ReadMark{Offset: off})
}
