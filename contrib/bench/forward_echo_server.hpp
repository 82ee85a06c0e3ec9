// forward_echo_server: `forward_load serve`, the echo server that the load
// client's streams reach through the SSH port forward.
#pragma once

namespace forward_load {

// `forward_load serve [--port-file FILE]` with argv after the mode: listens
// on an ephemeral port of 127.0.0.1 (printed as "port=N" and written to
// FILE) and echoes every connection until SIGTERM or SIGINT.
int run_serve(int argc, char** argv);

}  // namespace forward_load
