package caddymodule

// RouteTable exposes the route table's (method, documented path) pairs to
// the external tests that compare it with service.json and the OpenAPI
// document.
func RouteTable() [][2]string {
	out := make([][2]string, len(routes))
	for i, r := range routes {
		out[i] = [2]string{r.Method, r.Path}
	}
	return out
}
