// Package docs owns the OpenAPI 3.1 document of Tollgate's HTTP API
// (openapi.yaml beside this file). The gateway serves this embedded copy at
// GET /openapi.yaml, so the served document is the file in the repository.
package docs

import _ "embed"

// OpenAPI is docs/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
