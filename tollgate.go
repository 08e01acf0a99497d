// Package tollgate is the module root that xcaddy imports as a plugin
// (`xcaddy build --with github.com/tollgate-rpc/tollgate@v0.0.0=.`); importing
// it registers the http.handlers.tollgate Caddy module.
package tollgate

import _ "github.com/tollgate-rpc/tollgate/caddymodule"
