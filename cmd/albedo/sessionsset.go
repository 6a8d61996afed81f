package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"albedo/client"
	"albedo/wire"
)

// settingFlags are the settings sessions new and sessions set take; a
// flag left out is nil.
type settingFlags struct {
	title, model, effort, system string
	temperature                  float64 // sessions set only
	cmd                          *cobra.Command
}

// add gives cmd the flags; creating is true for sessions new, where an
// empty value is no setting rather than a setting given back.
func (f *settingFlags) add(cmd *cobra.Command, creating bool) {
	f.cmd = cmd
	unset := func(what string) string {
		if creating {
			return ""
		}
		return "; \"\" " + what
	}
	cmd.Flags().StringVar(&f.title, "title", "", "title")
	cmd.Flags().StringVar(&f.model, "model", "", "model (default: the provider profile's)"+unset("gives it back to the profile's default"))
	cmd.Flags().StringVar(&f.effort, "effort", "", "reasoning effort: "+strings.Join(wire.Efforts, ", ")+unset("clears it"))
	cmd.Flags().StringVar(&f.system, "system", "", "the system text its provider is sent before the transcript (- reads standard input)"+unset("gives it back to the profile's"))
	_ = cmd.RegisterFlagCompletionFunc("effort", cobra.FixedCompletions(wire.Efforts, cobra.ShellCompDirectiveNoFileComp))
	if !creating {
		cmd.Flags().Float64Var(&f.temperature, "temperature", 0, "the temperature its provider is sent, 0 to 2 (OpenAI-compatible providers; Anthropic's API takes none); -1 gives it back to the provider's own")
	}
}

// patch is what was given, checked against the daemon's bounds so that a
// mistake is told in words before anything is sent. stdin is read for
// --system -.
func (f *settingFlags) patch(g *globals) (wire.SessionPatch, error) {
	var p wire.SessionPatch
	given := func(name string, v string) *string {
		if !f.cmd.Flags().Changed(name) {
			return nil
		}
		return &v
	}
	p.Title, p.Model, p.Effort, p.System = given("title", f.title), given("model", f.model), given("effort", f.effort), given("system", f.system)
	if f.cmd.Flags().Lookup("temperature") != nil && f.cmd.Flags().Changed("temperature") {
		t := f.temperature
		if t < 0 {
			t = -1
		}
		if t > 2 {
			return p, usageErrorf("--temperature is 0 to 2, or -1 for the provider's own; not %g", t)
		}
		p.Temperature = &t
	}
	if p.System != nil && *p.System == "-" {
		text, err := inputText([]string{"-"}, g.stdin)
		if err != nil {
			return p, err
		}
		p.System = &text
	}
	return p, checkSettings(p)
}

// checkSettings refuses what the daemon would: an effort it does not
// know, a text past its bound.
func checkSettings(p wire.SessionPatch) error {
	if p.Effort != nil && !wire.ValidEffort(*p.Effort) {
		return usageErrorf("--effort is one of %s (or \"\" for none), not %q", strings.Join(wire.Efforts, ", "), *p.Effort)
	}
	for _, b := range []struct {
		what string
		v    *string
		max  int
	}{{"the title", p.Title, wire.MaxTitleBytes}, {"the model's name", p.Model, wire.MaxModelBytes}, {"the system text", p.System, wire.MaxSystemBytes}} {
		if b.v != nil && len(*b.v) > b.max {
			return usageErrorf("%s is %d bytes long; it may be %d at most", b.what, len(*b.v), b.max)
		}
	}
	if p.Title != nil && strings.TrimSpace(*p.Title) == "" && *p.Title != "" {
		return usageErrorf("the title is blank")
	}
	return nil
}

func newSessionsSetCmd(g *globals) *cobra.Command {
	var f settingFlags
	cmd := &cobra.Command{
		Use:   "set SESSION [--title T] [--model M] [--effort E] [--system TEXT|-] [--temperature T]",
		Short: "change a session's title, model, reasoning effort, system text or temperature",
		Long: "Change the settings given, and only those; each change is a settings event in the session, and\n" +
			"the next turn uses it. --model \"\" gives the session back to its provider profile's model,\n" +
			"--effort \"\" clears the effort, --system \"\" gives it back to the profile's system text;\n" +
			"--system - reads the text from standard input.\n\n" + sessionArgHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.patch(g)
			if err != nil {
				return err
			}
			if p == (wire.SessionPatch{}) {
				return usageErrorf("nothing to set: give --title, --model, --effort, --system or --temperature")
			}
			c, s, err := g.named(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if s, err = patchSession(cmd.Context(), c, s, p); err != nil {
				return err
			}
			printf(g.stdout, "session %s (%s): %s\n", client.ShortID(s.ID), titleOr(s, "untitled"), settingsLine(s))
			return nil
		},
		ValidArgsFunction: g.completeSessions,
	}
	f.add(cmd, false)
	return cmd
}

// settingsLine says what a turn of s would use now.
func settingsLine(s wire.Session) string {
	model := orDash(modelOf(s))
	if s.Model == "" && s.ResolvedModel != "" {
		model += " (the profile's default)"
	}
	system := "the profile's"
	if s.System != "" {
		system = fmt.Sprintf("its own, %d bytes", len(s.System))
	}
	temp := "the provider's"
	if s.Temperature != nil {
		temp = fmt.Sprint(*s.Temperature)
	}
	return fmt.Sprintf("provider %s, model %s, effort %s, system text %s, temperature %s", orDash(providerOf(s)), model, orDash(s.Effort), system, temp)
}

// patchSession applies p to s. A change made meanwhile elsewhere (a
// model set in the terminal) makes the ETag stale: the session is read
// again and p applied to what it is now.
func patchSession(ctx context.Context, c *client.Client, s wire.Session, p wire.SessionPatch) (wire.Session, error) {
	for range 3 {
		next, err := c.PatchSession(ctx, s.ID, s.ETag, p)
		if !errors.Is(err, client.ErrStaleETag) {
			return next, err
		}
		if s, err = c.Session(ctx, s.ID); err != nil {
			return s, err
		}
	}
	return s, fmt.Errorf("session %s kept changing while being set; try again", s.ID)
}
