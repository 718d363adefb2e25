# SPDX-License-Identifier: GPL-2.0
# rbframes.rb - Ruby waits whose frames latsnap must name (tests/integration/89d-ruby-frames.t):
# serve() calls handle_request() in a loop, which sleeps 200 ms; then take_lock() waits 200 ms
# for a Mutex another thread holds. Prints what it did; exits with its argument (0 without one),
# so that a test sees the status latsnap hands on.

def handle_request
  sleep 0.2 # SLEEP
end

def serve(n)
  n.times do # SERVE-LOOP
    handle_request # SERVE-CALL
  end
end

def take_lock(mutex)
  mutex.synchronize do # LOCK-WAIT
    :taken
  end
end

# latsnap names a frame from the iseq once the stack has reached it, while this runs on: short
# sleeps, none an outlier, leave it the time before the interpreter exits.
def linger
  10.times { sleep 0.03 }
end

serve(2)
puts "served: 2"
mutex = Mutex.new
ready = Queue.new
holder = Thread.new do
  mutex.synchronize do # HOLD-LOCK
    ready << true
    sleep 0.2 # HOLD-SLEEP
  end
end
ready.pop
take_lock(mutex) # TAKE-CALL
holder.join
puts "lock: taken"
linger
exit((ARGV[0] || 0).to_i)
