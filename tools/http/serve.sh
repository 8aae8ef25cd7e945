#!/usr/bin/env bash
# Serves a directory over loopback HTTP with Debian's nginx (byte ranges,
# ETag and Last-Modified, keep-alive), in the foreground, with its own
# config and logs in a temporary directory: never the system service.
#
#   tools/http/serve.sh DIR PORT
#
# Packs under DIR are then at http://127.0.0.1:PORT/NAME.planetpack.
set -euo pipefail
dir=$(cd "$1" && pwd)
port=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
error_log $work/error.log;
pid $work/nginx.pid;
events { worker_connections 256; }
http {
  access_log $work/access.log;
  client_body_temp_path $work/body;
  proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi;
  uwsgi_temp_path $work/uwsgi;
  scgi_temp_path $work/scgi;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:$port;
    root $dir;
  }
}
CONF
exec /usr/sbin/nginx -c "$work/nginx.conf" -p "$work"
