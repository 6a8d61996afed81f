// Package term is albedo's full-screen terminal client, on tcell v2.
//
// One goroutine (App.loop, started by Run) owns all state. It selects over screen events and
// messages from the client (subscription items, connection states, the
// results of HTTP calls), applies each to the Model (update.go), and then
// redraws: drawing (draw.go) is a pure function of the Model. Update never
// performs I/O; it returns Cmds that the App runs on other goroutines, whose
// results come back as messages into the same loop.
//
// Files: model.go (the state), update.go (keys and messages), keys.go (the
// key table: dispatch and help) and keyactions.go (what its keys run),
// commands.go (slash commands and Cmds), draw.go and wrap.go (rendering),
// app.go (the loop and the Cmd runner).
package term
