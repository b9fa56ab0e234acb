package config

import _ "embed" // Schema

// Schema is the JSON Schema (draft 2020-12) of the config file, for
// editors: every key the parser accepts, with its type, range,
// default and meaning. It is kept by hand beside the parser;
// TestSchemaKeys fails when a key is in one and not the other, and
// docs/config.schema.json is its published copy (TestSchemaPublished).
// It describes the file's shape: a few checks stay the parser's alone
// (a base_url without a model, a duplicate server name).
//
//go:embed schema.json
var Schema []byte
