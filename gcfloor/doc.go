// Package gcfloor keeps the Go collector's heap goal from falling below a
// floor while little of the heap is live.
//
// With GOGC at 100 the collector runs each time the heap doubles what it
// kept live, and the daemon keeps little live while it is busy: a
// session's events go to the store and leave memory, so a busy daemon
// with a few MiB live collects many times a second, and a collection
// costs about the same CPU whatever the heap's size. Keep raises GOGC,
// after every collection, just enough that the next one waits until the
// heap reaches the floor; once the live heap is large enough that GOGC's
// own goal is above the floor (a crowd of connections), GOGC is what it
// was. The price is bounded: at most the floor of memory held as garbage,
// which an operator sets (albedo daemon --gc-floor-bytes, 0 for none).
//
// # Files
//
//   - gcfloor.go: Keep, and the adjustment made after each collection.
package gcfloor
