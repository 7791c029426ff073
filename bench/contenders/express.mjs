/**
 * The baselines: bare Express 5 for `GET /v1/realms` (the same route with no authentication at
 * all), and stubs for the OAuth endpoints, each an Express handler that parses the same request
 * as a real endpoint and answers a fixed response. Nothing is looked up, issued or stored: what
 * these rows measure is Node, HTTP and Express, the ceiling every contender is held against.
 */
import { listen, ready } from '../lib/contender.mjs';
import { stubApp } from '../lib/stub-app.mjs';

const { server } = await listen(stubApp());
// The stub reads a cookie like a real authorization endpoint would; any will do.
ready(server, { cookie: 'session=stub' });
