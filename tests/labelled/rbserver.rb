# SPDX-License-Identifier: GPL-2.0
# rbserver.rb SOCKET: the labelled set's Ruby 3.1 threaded server (README.md). The main thread
# accepts connections on the unix stream socket SOCKET and queues them; a pool of 3 threads on
# Queue#pop (waiting for the next job: idle) reads one request line from each and does it:
# "hold" computes for 280 ms (holding the GVL), "contend", sent 40 ms later, needs the GVL that
# "hold" holds (the acceptor to take the connection, a worker to run it: latency, waits inside a
# request), "nap" sleeps 200 ms (latency), "quit" exits. Requests carry the client's send time
# (client.py with LAB_STAMP=1): the acceptor's wait for the GVL after accept is from then.
# Ground truth to $LAB_LOG: "LABEL TID START END WHAT"; "work TID START END" spans a request,
# inside which any wait is latency (a computation holds none).
require 'socket'

LOG = ENV['LAB_LOG']
$log = LOG ? File.open(LOG, 'a') : nil
$log&.sync = true
$mutex = Mutex.new

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

def lab(label, tid, t0, t1, what)
  $mutex.synchronize { $log&.write("#{label} #{tid} #{t0} #{t1} #{what}\n") }
end

def burn(seconds)
  t_end = now + (seconds * 1e9).to_i
  x = 0
  x += 1 while now < t_end
  x
end

jobs = Queue.new
acceptor = Thread.current.native_thread_id
workers = 3.times.map do
  Thread.new do
    me = Thread.current.native_thread_id
    $mutex.synchronize { $log&.write("thread #{me} rb_worker\n") }
    loop do
      t0 = now
      conn, t_acc, t_accept = jobs.pop
      t1 = now
      lab('idle', me, t0, t_acc, 'jobwait')
      # From the job's queueing to Queue#pop's return: its wakeup and its wait for the GVL, if
      # any (the request's read after it is not: the client's line may still be on its way).
      lab('latency', me, t_acc, t1, 'gvl')
      line = conn.gets.to_s.split
      cmd, sent = line[0], line[1].to_i
      # The acceptor waited for a connection until the client's connect (its stamp, taken just
      # before), then for the GVL until accept returned to Ruby. A client that connected before
      # the acceptor called accept (its connection waited in the backlog) found it returning at
      # once: all of that call was the wait for the GVL.
      if sent.positive? && sent < t_acc && sent > t_accept
        lab('idle', acceptor, t_accept, sent, 'accept')
        lab('latency', acceptor, sent, t_acc, 'gvl')
      elsif sent.positive? && sent <= t_accept
        lab('latency', acceptor, t_accept, t_acc, 'gvl')
      else
        lab('idle', acceptor, t_accept, t_acc, 'accept')
      end
      case cmd
      when 'hold' then burn(0.28)
      when 'nap'
        t = now
        sleep 0.2
        lab('latency', me, t, now, 'sleep')
      when 'quit'
        conn.write("done\n")
        conn.close
        exit!(0)
      end
      conn.write("done\n") rescue nil
      conn.close
      lab('work', me, t_acc, now, cmd.to_s)
    end
  end
end

File.unlink(ARGV[0]) if File.exist?(ARGV[0])
server = UNIXServer.new(ARGV[0])
$mutex.synchronize { $log&.write("thread #{acceptor} rb_acceptor\n") }
loop do
  t0 = now
  conn = server.accept
  t1 = now
  # Labelled by the worker, which reads the client's stamp: when the wait for a connection ended.
  jobs.push([conn, t1, t0])
end
