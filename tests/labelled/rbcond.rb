# SPDX-License-Identifier: GPL-2.0
# rbcond.rb: the labelled set's Ruby 3.1 producer/consumer (README.md), no sockets. Two consumer
# threads wait on a ConditionVariable (with its Mutex) for items (idle) and sleep 100 ms per item
# (latency). Per round a new thread locks another Mutex and sleeps 300 ms holding it (latency),
# 40 ms later another new thread locks it (latency: a lock its holder releases), the main thread
# (the producer) joins both (latency), sleeps 300 ms (latency) and hands the consumers an item.
# Ground truth to $LAB_LOG, and its own window. Ruby 3.1 keeps a finished thread's native thread
# for the next Thread.new (its thread cache: an idle wait, not labelled), so a round's holder may
# run on the last round's taker: the holder and taker log no role.
LOG = ENV['LAB_LOG']
$log = LOG ? File.open(LOG, 'a') : nil

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

# One write(2) per line: the threads' lines never mix.
def put_log(line) = $log&.syswrite(line)

def lab(label, t0, t1, what)
  put_log("#{label} #{Thread.current.native_thread_id} #{t0} #{t1} #{what}\n")
end

def role(name) = put_log("thread #{Thread.current.native_thread_id} #{name}\n")

def nap(seconds)
  t0 = now
  sleep seconds
  lab('latency', t0, now, 'sleep')
end

items = []
items_mu = Mutex.new
items_cv = ConditionVariable.new
resource = Mutex.new

consumers = 2.times.map do
  Thread.new do
    role('rc_consumer')
    loop do
      t0 = now
      item = items_mu.synchronize do
        items_cv.wait(items_mu) while items.empty?
        items.shift
      end
      lab('idle', t0, now, 'jobwait')
      break if item == :quit

      nap(0.1)
    end
  end
end

role('rc_main')
sleep 0.1 # before the window: not scored
start = now
2.times do
  held = Queue.new
  a = Thread.new do
    resource.synchronize do
      held << true
      nap(0.3)
    end
  end
  t0 = now
  # The taker only once the lock is held: a machine's load may delay the holder's start.
  held.pop
  lab('latency', t0, now, 'start')
  nap(0.04)
  b = Thread.new do
    t1 = now
    resource.synchronize { lab('latency', t1, now, 'lock') }
  end
  t0 = now
  a.join
  b.join
  lab('latency', t0, now, 'join')
  nap(0.3) # the consumers wait for their next item meanwhile
  items_mu.synchronize do
    items << 1
    items_cv.signal
  end
  nap(0.01)
end
finish = now
items_mu.synchronize do
  items.push(:quit, :quit)
  items_cv.broadcast
end
consumers.each(&:join)
put_log("window #{start} #{finish}\n")
