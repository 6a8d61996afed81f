package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// usage serves GET /v1/usage?by=session|member|provider|participant|day[&since=…]:
// what the turns cost, summed (admins only; hub.UsageReport).
func (s *Server) usage(c echo.Context) error {
	r, err := s.hub.UsageReport(c.Request().Context(), c.QueryParam("by"), c.QueryParam("since"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
