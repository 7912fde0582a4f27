// Package reliability holds end-to-end tests of how datasf-mcp behaves under
// upstream faults, hostile input and load: each test runs the real packages
// (socrata client, datasf server, dualresp REST handler and client) against
// the socratatest fake portal over loopback HTTP.
package reliability
