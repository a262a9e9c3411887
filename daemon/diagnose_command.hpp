// SPDX-License-Identifier: Apache-2.0
// `memdiagd diagnose [--url URL | --socket PATH] [--config FILE] [--duration S] [--format text|json]
// [--since DURATION] [--timeout DURATION]`: the diagnosis report for a person on call.
// It asks the running daemon (/api/v1/diagnosis at --url or on the Unix socket --socket; by
// default on the config's web.unix_socket when this user can connect to it, else at the
// config's listen address on loopback). With --duration, or when no daemon answers (none listening, or none
// answering within --timeout), it samples the node itself for the duration (5 s by default)
// with the config's sources and prints the same report, saying so on stderr. With --replay
// FILE it runs the models over a recording (`memdiagd record`) instead and reports its last
// snapshot; with --allow-truncated a recording cut short is replayed up to the cut.
// Exit codes: 0 a report was printed, 1 none could be made, 2 bad arguments or a recording
// that is not one (truncated, malformed, unreadable).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "probes/core/expected.hpp"

namespace memdiag {

struct DiagnoseOptions {
  std::optional<std::string> url;
  std::optional<std::string> config_path;
  std::optional<std::chrono::milliseconds> duration;  // sample locally for this long
  bool json = false;
  std::optional<std::chrono::milliseconds> since;
  std::chrono::milliseconds timeout{5000};
  std::optional<std::string> replay;  // a recording to replay instead of asking or sampling
  bool allow_truncated = false;
  bool help = false;
  // Basic auth for a daemon whose web config has users: "user:password" on the first line of
  // this file (else the MEMDIAG_BASIC_AUTH environment variable).
  std::optional<std::string> basic_auth_file;
  // https: verify the daemon against these CA certificates instead of trusting the certificate
  // its web config names.
  std::optional<std::string> ca_file;
  // Ask the daemon on this Unix socket (web.unix_socket): plain HTTP, no credentials.
  std::optional<std::string> socket;
  // https: the client certificate (PEM, with its chain) and its key, for a daemon whose web
  // config requires one (client_auth_type). Both or neither.
  std::optional<std::string> cert_file;
  std::optional<std::string> key_file;
};

Expected<DiagnoseOptions> parse_diagnose_args(const std::vector<std::string>& args);
std::string diagnose_usage();

// "0.0.0.0:9842" -> "http://127.0.0.1:9842/api/v1/diagnosis": the daemon's address as seen
// from this host (a wildcard address is reached on loopback); https:// when `tls`.
std::string diagnosis_url_for(const std::string& listen_address, bool tls = false);

int run_diagnose(const std::vector<std::string>& args);

}  // namespace memdiag
