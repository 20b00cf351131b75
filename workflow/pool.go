package workflow

import "github.com/locumdev/locum/pool"

// Server is one endpoint of the pool a workflow spreads its items over, with its counts.
type Server = pool.Server
