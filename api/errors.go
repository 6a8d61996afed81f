package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"albedo/wire"
)

// httpStatus maps an error code to its HTTP status.
func httpStatus(code wire.Code) int {
	switch code {
	case wire.CodeBadRequest, wire.CodeUnknownOp, wire.CodeHelloRequired:
		return http.StatusBadRequest
	case wire.CodeUnauthorized:
		return http.StatusUnauthorized
	case wire.CodeForbidden:
		return http.StatusForbidden
	case wire.CodeNotFound:
		return http.StatusNotFound
	case wire.CodeConflict, wire.CodeNotServing:
		return http.StatusConflict
	case wire.CodeEtagMismatch:
		return http.StatusPreconditionFailed
	case wire.CodeEtagRequired:
		return http.StatusPreconditionRequired
	case wire.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case wire.CodeTooMany:
		return http.StatusTooManyRequests
	case wire.CodeDaemonStopping:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errorHandler renders every error echo sees, including its own (unknown
// route, wrong method, body too large), in the contract's shape.
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	var we *wire.Error
	switch {
	case errors.As(err, &we):
	case errors.As(err, &he):
		code := wire.CodeBadRequest
		switch he.Code {
		case http.StatusNotFound:
			code = wire.CodeNotFound
		case http.StatusUnauthorized:
			code = wire.CodeUnauthorized
		case http.StatusRequestEntityTooLarge:
			code = wire.CodeTooLarge
		case http.StatusMethodNotAllowed:
			code = wire.CodeMethodNotAllowed
		}
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok {
			msg = m
		}
		we = &wire.Error{Code: code, Message: msg}
		_ = c.JSON(he.Code, wire.ErrorBody{Error: we})
		return
	default:
		we = wire.AsError(s.log, err, "route", c.Request().Method+" "+c.Path(), "session", c.Param("id"))
	}
	we.Retryable = false // an HTTP caller reads the status instead
	_ = c.JSON(httpStatus(we.Code), wire.ErrorBody{Error: we})
}
