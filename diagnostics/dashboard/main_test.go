package dashboard

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: no stream, no
// refreshing goroutine of the handler, nothing of the browser.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
