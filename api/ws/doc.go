// Package ws is the daemon's websocket transport, /v1/ws: the upgrade,
// each connection's reader and writer, the frame codec of the commands
// clients send, the websocket ops and their permission table, and the
// pool of goroutines that writes to every connection. Package api routes
// the request here once its edge has checked it (host, token) and answers
// over HTTP what Serve refuses.
//
// # The seam with the hub
//
// A connection is a hub.Conn on the hub's side; this package is its
// transport, and meets it at four methods, the whole contract:
//
//   - hub.Conn.OnWake: the hub calls the func given to it when there is
//     something to write; the transport queues the connection's writer
//     and never blocks in it;
//   - hub.Conn.Fill: the writer pulls the frames to write (replies first,
//     then each ready cursor's events), one goroutine at a time;
//   - hub.Conn.Reply and ReplyJSON: the reader queues the one reply every
//     command gets;
//   - hub.Conn.AwaitRoom: before each command the reader waits for room
//     among the connection's unsent replies, so that a client that does
//     not read is not read either.
//
// # Goroutines
//
// Each connection has a reader goroutine, started once hello is served
// (on a goroutine of its own, which the HTTP handler starts as it returns,
// so that net/http lets go of the request): it decodes commands and calls
// the hub. Its writer runs only while there is something to write: OnWake
// queues it on the server's writer pool, whose few goroutines take
// writers in turn; it writes what Fill returns, several frames per
// message, and ends when Fill has nothing more. A write that would wait
// for a slow peer, or a close handshake, takes its goroutine out of the
// pool, so that one peer never holds the others' writes. When the reader
// or the writer fails, the connection ends, and the reader returns last.
// Between messages the reader waits in its lean socket (leanConn.await),
// not under coder/websocket's reader, so that an idle connection's
// goroutine keeps the smallest stack; the socket reads the heartbeat's
// pongs there itself. A heartbeat ping that waits for its pong runs on
// its timer's goroutine; it is the lean socket's own frame, written
// between the library's; none is sent while a write waits for its peer,
// which the write timeout rules.
//
// # Files
//
//   - server.go: Server, its options, the upgrade (Serve) and the hello
//     its request may carry (headerHello), Bye and Close, and the
//     connections a revocation closes.
//   - conn.go: one connection, hello and its read loop.
//   - shares.go: each token's share of the daemon's connections, and the
//     room links, guests and bots leave to people, taken at hello.
//   - prove.go: the prove op, by which the daemon proves to a page, before
//     its hello, that it holds the key the page's link carries (Proof).
//   - ops.go: the ops' dispatch and permission table, each op, and the
//     frames' split and decode (go-json-experiment's v1;
//     what it refuses, encoding/json).
//   - feed.go: the ops of the sessions feed: feed, which starts or
//     resumes it, and feed_page.
//   - inputs.go: inputs in flight, answered by their commit's receipts.
//   - writer.go: a connection's writer and heartbeat.
//   - sockopt_linux.go, sockopt_other.go: Unread, whether a socket holds
//     bytes nobody has read yet, which the accept gate and the heartbeat
//     ask, and lowWater, the cap on what a websocket's socket holds unsent
//     (on Linux only; elsewhere Unread says no and lowWater does nothing).
//   - pool.go: the writer pool, and who owns a connection's write side.
//   - socket.go, socket_write.go: the lean socket, which holds no buffer
//     while a connection is idle, under coder/websocket.
//   - socket_frames.go: inFrames, which follows the peer's frames so that
//     the lean socket never hands the library bytes past a frame's end.
//   - socket_await.go: the reader's wait between messages, shallow, and
//     the pongs it reads itself.
//   - wstest: a test client for this package's tests and api's.
package ws
