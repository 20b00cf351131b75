// Command locum hands bounded work to a model on this machine's OpenAI-compatible server, under
// rails enforced in code.
package main

import "os"

func main() { os.Exit(Main(os.Args)) }
