# SPDX-License-Identifier: GPL-2.0
# rubywaits.rb: three waits of Ruby's, one after the other, each in a thread named after it (a
# Ruby thread's name is its comm). "mutexwaiter" waits ~200 ms in Mutex#synchronize for the
# Mutex "mutexholder" holds; "sleeper" sleeps 0.2 s; "gvlwaiter" wants to run while "spinner"
# runs pure Ruby code for 300 ms, and waits for the GVL; "spinA" and "spinB" compute at once,
# each waiting for the GVL the other holds after its own timeslice; "joiner" waits for it after a
# join; the main thread sleeps 0.2 s at the end. Prints "tid NAME TID" for each.
def named(name)
  Thread.new do
    Thread.current.name = name
    puts "tid #{name} #{File.read('/proc/thread-self/stat').split[0]}"
    $stdout.flush
    yield
  end
end

def spin(secs)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  x = 0
  x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < secs
  x
end

m = Mutex.new
held = Queue.new
holder = named('mutexholder') { m.synchronize { held << 1; sleep 0.2 } }
held.pop
named('mutexwaiter') { m.synchronize {} }.join
holder.join

named('sleeper') { sleep 0.2 }.join

ready = Queue.new
waiter = named('gvlwaiter') do
  ready << 1
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  File.read('/proc/self/stat') while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < 0.4
end
ready.pop
named('spinner') { spin(0.3) }.join
waiter.join

# Two threads computing at once: each gives the GVL up at its timeslice's end (100 ms) for the
# other, and waits to run again (flag ruby-gvl-yield: the thread was running).
spinners = %w[spinA spinB].map { |n| named(n) { spin(0.4) } }
spinners.each(&:join)

# "joiner" joins "napper", which ends while "spinner2" computes: woken by the join's end, joiner
# waits for the GVL spinner2 holds without having had a timeslice (flag ruby-gvl, not -yield).
named('joiner') do
  s = named('spinner2') { spin(0.5) }
  named('napper') { sleep 0.2 }.join
  s.join
end.join

# The main thread, which holds Ruby's signal pipe, sleeps and joins in a ppoll, not on its
# condition variable: a sleep (flag ruby-timed), and waits for other threads (ruby-stopped).
sleep 0.2
