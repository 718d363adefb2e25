#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Event-driven servers nobody here wrote: Debian's haproxy 2.6 (nbthread 2) and nginx 1.22
# (nginx-light, 2 workers), each in front of httpslow's upstream, which sleeps 300 ms for 10 of
# the client's 60 overlapping requests (one every 6, 5 ms apart). Recorded with -t 100ms and the
# recipes of latsnap(1)'s REQUESTS section (a request is the proxy's object: haproxy's stream,
# nginx's ngx_http_request_t, from the function that returns it to the one that frees it):
#   haproxy: uretprobe:/usr/sbin/haproxy:stream_new=ret,uprobe:/usr/sbin/haproxy:stream_free=arg1
#   nginx:   uretprobe:/usr/sbin/nginx:ngx_http_create_request=ret,
#            uprobe:/usr/sbin/nginx:ngx_http_free_request=arg1
# For each proxy:
#  - every request was answered 200 (the client's log), so the case tests what it says;
#  - at least 9 of the 10 slow requests are found: the proxy's first request outlier to begin
#    within the client's span of that request (it ends after the client has its answer: the
#    proxy frees it then) lasts 250 ms or more; 9 or 10 request outliers in all (none for a fast
#    one);
#  - at least 9 of them name the upstream's wait: request.upstream is the upstream thread that
#    served that request, and the first link of its wait chain (summary.json) is that thread, in
#    clock_nanosleep;
#  - no syscall outlier of the proxy's own threads: its loops' epoll_wait are waits for events
#    (a preemption on a loaded machine may still be an outlier, of kind sleep, rightly).
# On main 534b883: record rejects the keys (exit 2); with the same probes unkeyed (the thread as
# the key), 0 of 10 for each proxy (starts overlap on a thread and restart each other; an end
# comes on another stream's thread state).
set -u
. "$(dirname "$0")/lib.sh"

require_record httpslow
require_lttng
require /usr/sbin/haproxy /usr/sbin/nginx
kernel_has_cookies || skip_kernel "lacks BPF cookies (Linux 5.15), which record --request needs"
[ -e /sys/kernel/tracing/events/sock/sk_data_ready ] ||
	[ -e /sys/kernel/debug/tracing/events/sock/sk_data_ready ] ||
	skip_kernel "lacks the sk_data_ready tracepoint (Linux 6.5), which names a request's upstream"

# Ports of this run's own: the packaged services, and other tests, keep theirs.
BASE=$((20000 + $$ % 20000))
UP=$BASE
HP=$((BASE + 1))
NG=$((BASE + 2))

cat >"$TMPD/haproxy.cfg" <<EOF
global
	nbthread 2
	maxconn 1000
defaults
	mode http
	timeout connect 2s
	timeout client 10s
	timeout server 10s
frontend fe
	bind 127.0.0.1:$HP
	default_backend be
backend be
	server up 127.0.0.1:$UP
EOF
mkdir -p "$TMPD/ng"
cat >"$TMPD/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $TMPD/ng/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $TMPD/ng/body;
	proxy_temp_path $TMPD/ng/proxy;
	fastcgi_temp_path $TMPD/ng/fastcgi;
	uwsgi_temp_path $TMPD/ng/uwsgi;
	scgi_temp_path $TMPD/ng/scgi;
	server {
		listen 127.0.0.1:$NG;
		location / { proxy_pass http://127.0.0.1:$UP; }
	}
}
EOF

# run.sh PROXY PORT: the upstream and PROXY up, the client's 60 requests through PORT, all down.
cat >"$TMPD/run.sh" <<EOF
#!/bin/sh
"$WL/httpslow" serve $UP 300 & up=\$!
case "\$1" in
haproxy) /usr/sbin/haproxy -db -f "$TMPD/haproxy.cfg" & px=\$! ;;
nginx) /usr/sbin/nginx -c "$TMPD/nginx.conf" -e stderr & px=\$! ;;
esac
# Both listen before the first request.
for i in \$(seq 50); do
	ss -ltn | grep -q ":\$2 " && ss -ltn | grep -q ":$UP " && break
	sleep 0.1
done
"$WL/httpslow" client \$2 60 6 5; rc=\$?
kill \$px \$up; wait
exit \$rc
EOF
chmod +x "$TMPD/run.sh"

# proxy NAME PORT SPEC: one recorded run of NAME and its checks.
proxy() {
	local name=$1 port=$2 spec=$3 log found=0 named=0 id s e tid n up link sums req key
	LATSNAP_TIMEOUT=60 record_snap "$name" -t 100ms --no-flood-guard -o "$TMPD/$name.d" \
		--request "$spec" -- "$TMPD/run.sh" "$name" "$port"
	is "$RC" 0 "$name: latsnap record exits 0"
	log=$TMPD/$name.log
	is "$(awk '$1 == "client" && $5 == 200' "$log" | grep -c '')" 60 \
		"$name: the client's 60 requests were answered 200"
	sums=$(find "$TMPD/$name.d" -name summary.json 2>/dev/null)
	for id in 0 6 12 18 24 30 36 42 48 54; do
		read -r s e <<<"$(awk -v i="$id" '$1 == "client" && $2 == i { print $3, $4; exit }' "$log")"
		tid=$(awk -v i="$id" '$1 == "upstream" && $2 == i { print $3; exit }' "$log")
		# Its request: the proxy's first to begin once the client had sent it.
		req=$(jq -s -c "[.[] | select(.kind == \"request\" and .comm == \"$name\" and
			.start_ns >= ${s:-0} and .start_ns <= ${e:-0})] | sort_by(.start_ns) | .[0] // empty" \
			"$TMPD/$name.out" 2>/dev/null)
		n=$(jq -r 'select(.duration_ns >= 250000000) | 1' <<<"${req:-null}" 2>/dev/null)
		[ "$n" = 1 ] && found=$((found + 1))
		key=$(jq -r '.request.key // empty' <<<"${req:-null}" 2>/dev/null)
		up=$(jq -r '.request.upstream.tid // empty' <<<"${req:-null}" 2>/dev/null)
		link=$(cat $sums /dev/null 2>/dev/null | jq -r ".outliers[]? | select(.kind == \"request\" and
			.request.key == \"$key\" and .start_ns == $(jq -r '.start_ns // 0' <<<"${req:-null}")) |
			.wait_chain[0] | \"\(.tid) \(.syscall)\"" 2>/dev/null | head -n 1)
		if [ -n "$tid" ] && [ "$up" = "$tid" ] && [ "$link" = "$tid clock_nanosleep" ]; then
			named=$((named + 1))
		else
			diag "  $name request $id: upstream thread ${tid:-?}; its outlier ${key:-none}, upstream ${up:-none}, first link '${link:-none}'"
		fi
	done
	diag "$name: $found of 10 slow requests found, $named naming the upstream's wait"
	between "$found" 9 10 "$name: at least 9 of the 10 slow requests are request outliers"
	between "$named" 9 10 "$name: at least 9 of them name their upstream thread's clock_nanosleep"
	between "$(jcount "$TMPD/$name.out" 'select(.kind == "request")')" 9 10 \
		"$name: no request outlier for the 50 fast requests" || dump_outliers "$TMPD/$name.out"
	is "$(jcount "$TMPD/$name.out" "select(.kind == \"syscall\" and .comm == \"$name\")")" 0 \
		"$name: no syscall outlier of its own threads (its loops wait for events)" ||
		dump_outliers "$TMPD/$name.out"
}

proxy haproxy "$HP" \
	"uretprobe:/usr/sbin/haproxy:stream_new=ret,uprobe:/usr/sbin/haproxy:stream_free=arg1"
proxy nginx "$NG" \
	"uretprobe:/usr/sbin/nginx:ngx_http_create_request=ret,uprobe:/usr/sbin/nginx:ngx_http_free_request=arg1"

done_testing
