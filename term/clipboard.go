package term

import "encoding/base64"

// copyToClipboard puts text on the clipboard of the terminal the user
// sits at, through OSC 52. tcell sends OSC 52 only for terminals whose
// description looks like xterm's, so inside tmux with its own TERM
// (screen-256color, tmux-256color) or in foot it sent nothing while the
// status bar said "copied". The sequence goes to the tty directly instead:
// terminals that do not know it ignore it, and tmux with `set-clipboard
// on` takes it into a paste buffer (and on to the outer terminal). A
// screen with no tty (tcell's simulation, in tests) gets tcell's call.
func (a *App) copyToClipboard(text string) {
	if tty, ok := a.scr.Tty(); ok && tty != nil {
		_, _ = tty.Write([]byte(osc52(text)))
		return
	}
	a.scr.SetClipboard([]byte(text))
}

// osc52 is the sequence that sets the clipboard ("c") to text. Base64
// carries any bytes; BEL ends it, which every terminal that reads OSC 52
// (and tmux) accepts.
func osc52(text string) string {
	return "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte(text)) + "\x07"
}
