// SPDX-License-Identifier: GPL-2.0
/*
 * LabServer SOCKET: the labelled set's JVM server (README.md), OpenJDK 17. The main thread accepts
 * connections on the unix stream socket SOCKET and reads one request line from each; a fixed pool
 * of 3 threads, idle in the pool's queue (LinkedBlockingQueue.take: waiting for the next job),
 * does them: "hold" enters a synchronized block and sleeps 280 ms in it, "contend" enters the
 * same block (waits for the holder), "nap" sleeps 200 ms (all three latency: waits inside a
 * request); "quit" exits 0. Ground truth to $LAB_LOG: "LABEL TID START END WHAT" per wait
 * (System.nanoTime is CLOCK_MONOTONIC), "thread TID ROLE"; idle waits in the pool's queue are
 * not logged one by one (the pool's own code waits), the scorer takes every other wait as idle.
 */
import java.io.FileOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class LabServer {
	private static final Object resource = new Object();
	private static FileOutputStream log;

	/* The OS thread id of the calling thread: /proc/thread-self is PID/task/TID. */
	private static long tid() {
		try {
			return Long.parseLong(Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString());
		} catch (IOException e) {
			return -1;
		}
	}

	private static synchronized void lab(String line) {
		if (log == null) {
			return;
		}
		try {
			log.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
		} catch (IOException e) {
			/* the log is a test aid */
		}
	}

	private static void span(String label, long t0, long t1, String what) {
		lab(label + " " + tid() + " " + t0 + " " + t1 + " " + what);
	}

	private static void nap(long ms) throws InterruptedException {
		long t0 = System.nanoTime();
		Thread.sleep(ms);
		span("latency", t0, System.nanoTime(), "sleep");
	}

	private static void doJob(SocketChannel c, String cmd) {
		try {
			if (cmd.equals("hold")) {
				long t0 = System.nanoTime();
				synchronized (resource) {
					span("latency", t0, System.nanoTime(), "lock");
					nap(280);
				}
			} else if (cmd.equals("contend")) {
				long t0 = System.nanoTime();
				synchronized (resource) {
					span("latency", t0, System.nanoTime(), "lock");
				}
			} else if (cmd.equals("nap")) {
				nap(200);
			}
			c.write(ByteBuffer.wrap("done\n".getBytes(StandardCharsets.US_ASCII)));
			c.close();
		} catch (IOException | InterruptedException e) {
			/* the client left */
		}
	}

	private static String readRequest(SocketChannel c) throws IOException {
		ByteBuffer b = ByteBuffer.allocate(64);
		StringBuilder s = new StringBuilder();
		while (c.read(b) > 0) {
			b.flip();
			s.append(StandardCharsets.US_ASCII.decode(b));
			b.clear();
			if (s.indexOf("\n") >= 0) {
				break;
			}
		}
		return s.toString().trim();
	}

	public static void main(String[] args) throws Exception {
		String env = System.getenv("LAB_LOG");
		if (env != null) {
			log = new FileOutputStream(env, true);
		}
		Path path = Path.of(args[0]);
		Files.deleteIfExists(path);
		ServerSocketChannel srv = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
		srv.bind(UnixDomainSocketAddress.of(path));
		ExecutorService pool = Executors.newFixedThreadPool(3, r -> {
			Thread t = new Thread(() -> {
				lab("thread " + tid() + " java_worker");
				r.run();
			}, "java_worker");
			t.setDaemon(true);
			return t;
		});
		lab("thread " + tid() + " java_accept");
		for (;;) {
			long t0 = System.nanoTime();
			SocketChannel c = srv.accept();
			span("idle", t0, System.nanoTime(), "accept");
			String cmd = readRequest(c);
			if (cmd.isEmpty()) {
				c.close();
			} else if (cmd.equals("quit")) {
				c.write(ByteBuffer.wrap("bye\n".getBytes(StandardCharsets.US_ASCII)));
				c.close();
				Files.deleteIfExists(path);
				System.exit(0);
			} else {
				pool.execute(() -> doJob(c, cmd));
			}
		}
	}
}
