package api

import "github.com/labstack/echo/v4"

// noStore marks a reply that carries a token (a share's, a bot's) as one
// no cache may keep: a proxy's or the browser's disk would otherwise hold
// a credential after the reply was read. Pragma is for HTTP/1.0 caches,
// which know no Cache-Control.
func noStore(c echo.Context) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
}
