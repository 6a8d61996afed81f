package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Spec is a tool as its source declares it: a bot's serve, an MCP
// server's tools/list.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Bounds on what a source declares.
const (
	MaxTools            = 128     // tools of one source
	MaxDescriptionBytes = 4 << 10 // a tool's description
	MaxSchemaBytes      = 64 << 10
)

// CheckSpecs checks the tools a source declares: at most MaxTools; each
// name valid (ValidName) and not declared twice; a description of UTF-8
// text within MaxDescriptionBytes; an input schema that is a JSON object
// within MaxSchemaBytes whose type, if it says one, is "object" (what
// the providers' APIs take). The error names the first tool at fault.
func CheckSpecs(specs []Spec) error {
	if len(specs) > MaxTools {
		return fmt.Errorf("tools: %d; the limit is %d", len(specs), MaxTools)
	}
	seen := make(map[string]bool, len(specs))
	for i, s := range specs {
		at := fmt.Sprintf("tools[%d]", i)
		switch {
		case !ValidName(s.Name):
			return fmt.Errorf("%s: name %q is not 1 to %d of a-z 0-9 _ -", at, s.Name, MaxNameBytes)
		case seen[s.Name]:
			return fmt.Errorf("%s: %q is declared twice", at, s.Name)
		case len(s.Description) > MaxDescriptionBytes:
			return fmt.Errorf("%s (%s): the description is %d bytes; the limit is %d", at, s.Name, len(s.Description), MaxDescriptionBytes)
		case !utf8.ValidString(s.Description) || strings.ContainsRune(s.Description, 0):
			return fmt.Errorf("%s (%s): the description is not UTF-8 text", at, s.Name)
		}
		seen[s.Name] = true
		if err := checkSchema(s.InputSchema); err != nil {
			return fmt.Errorf("%s (%s): input_schema %v", at, s.Name, err)
		}
	}
	return nil
}

// CheckSchema checks the input schema of one tool a source lists (an MCP
// server's), as CheckSpecs does a bot's.
func CheckSchema(s Spec) error {
	if err := checkSchema(s.InputSchema); err != nil {
		return fmt.Errorf("input_schema %v", err)
	}
	return nil
}

// checkSchema checks an input schema: a bounded JSON object whose type,
// if given, is "object".
func checkSchema(raw json.RawMessage) error {
	if len(raw) > MaxSchemaBytes {
		return fmt.Errorf("is %d bytes; the limit is %d", len(raw), MaxSchemaBytes)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return fmt.Errorf("is not a JSON object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("is not a JSON object: %v", err)
	}
	if t, ok := top["type"]; ok {
		var typ string
		if json.Unmarshal(t, &typ) != nil || typ != "object" {
			return fmt.Errorf("has type %s; a tool's input is an object", t)
		}
	}
	return nil
}
