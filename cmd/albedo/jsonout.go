package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
)

// jsonFlag gives a command that lists things --json, as gh and kubectl
// have, and returns where its value is.
func jsonFlag(cmd *cobra.Command) *bool {
	return cmd.Flags().Bool("json", false, "print the list as one JSON array of objects, with the API's field names, and nothing else")
}

// printJSONList writes items to w as one JSON document: an array, [] when
// there are none, so that a script reads an empty list like any other.
// Each item keeps the field names of its JSON tags, the API's.
func printJSONList[T any](w io.Writer, items []T) error {
	if items == nil {
		items = []T{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(items)
}
