package api

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"albedo/hub"
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
	case wire.CodeDaemonStopping, wire.CodeUnavailable:
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
		s.errs.add(code)
		_ = c.JSON(he.Code, wire.ErrorBody{Error: we})
		return
	default:
		we = hub.AsError(s.log, err, "route", c.Request().Method+" "+c.Path(), "session", c.Param("id"))
	}
	we.Retryable = false // an HTTP caller reads the status instead
	if we.Code == wire.CodeUnavailable {
		c.Response().Header().Set("Retry-After", "1")
	}
	s.errs.add(we.Code)
	_ = c.JSON(httpStatus(we.Code), wire.ErrorBody{Error: we})
}

// errorCounts counts error replies by code, for albedo_errors_total. The
// codes are the contract's, a few dozen at most, so the map is bounded.
type errorCounts struct{ m sync.Map } // wire.Code → *atomic.Int64

func (e *errorCounts) add(code wire.Code) {
	n, ok := e.m.Load(code)
	if !ok {
		n, _ = e.m.LoadOrStore(code, new(atomic.Int64))
	}
	n.(*atomic.Int64).Add(1)
}

// each calls f with every code counted and its count.
func (e *errorCounts) each(f func(wire.Code, int64)) {
	e.m.Range(func(k, v any) bool {
		f(k.(wire.Code), v.(*atomic.Int64).Load())
		return true
	})
}
