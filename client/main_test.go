package client

import (
	"testing"

	"go.uber.org/goleak"
)

// Streams, servers and waits started by a test are stopped by it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
