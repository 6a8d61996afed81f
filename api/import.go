package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// importEvents serves POST /v1/sessions/{id}/import: the next events of a
// session being restored from an export (hub.ImportEvents).
func (s *Server) importEvents(c echo.Context) error {
	var in wire.SessionImport
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	pr, _ := principalOf(c)
	head, err := s.hub.ImportEvents(c.Request().Context(), pr, c.Param("id"), in.Events, in.Done)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, wire.SessionImported{Head: head})
}
