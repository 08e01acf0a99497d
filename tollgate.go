// Package tollgate is the module root that xcaddy imports as a plugin
// (`xcaddy build --with github.com/tollgate-rpc/tollgate@v0.0.0=.`).
// Importing it registers every Caddy module the shipped Caddyfiles use:
// the http.handlers.tollgate handler and the caddy.listeners.tollgate_conn_limit
// listener wrapper. caddymodule/cmd/caddy imports this package too, so
// `make build` and an xcaddy build list the same modules (TestXcaddyBuild).
package tollgate

import (
	_ "github.com/tollgate-rpc/tollgate/caddymodule"
	_ "github.com/tollgate-rpc/tollgate/caddymodule/connlimit"
)
