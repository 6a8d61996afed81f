package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
)

// usageError is a command line the bot cannot run with: main exits 2,
// as albedo does for its usage errors.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg + " (albedo-examplebot --help lists the flags)" }

const usageHead = `Usage: albedo-examplebot [--home DIR | --url URL] [--token TOKEN] [--pace D]

Serves the turns of the sessions whose provider is bot:NAME, NAME being the
bot its token was made for (albedo bots add NAME prints one), and answers
each with statistics of the conversation so far. Ctrl-C stops it.

Flags:
`

// parseFlags parses args into fs and says whether the bot is to run: not
// after --help (or -h), which prints the usage to stdout and is no error,
// nor after a bad command line (a *usageError). The flag package's own
// reports, which name flags with one dash and add "flag: help requested",
// are silenced.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (run bool, _ error) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs, stdout)
		return false, nil
	case err != nil:
		return false, &usageError{err.Error()}
	case fs.NArg() > 0:
		return false, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return true, nil
}

// printUsage writes the usage with every flag as --name, which the flag
// package accepts as it does -name.
func printUsage(fs *flag.FlagSet, w io.Writer) {
	io.WriteString(w, usageHead)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  --%s %s\t%s\n", f.Name, arg, usage)
	})
	tw.Flush()
}
