package main
import (
 _ "mvdan.cc/sh/v3/syntax"
 _ "mvdan.cc/sh/v3/expand"
 _ "github.com/spf13/cobra"
 _ "github.com/goccy/go-yaml"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "go.uber.org/goleak"
 _ "pgregory.net/rapid"
 _ "golang.org/x/text/unicode/norm"
 _ "golang.org/x/term"
)
func main(){}
