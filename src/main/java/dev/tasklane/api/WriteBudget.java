package dev.tasklane.api;

import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * The bytes of one event stream handed to the socket but not yet written out: at most
 * {@code limit}, so that a client that stops reading holds no more than that on this side. The
 * server asks the stream for writes in large batches and queues them while the socket is stalled,
 * so the stream must not offer more than the budget. A write is admitted once the bytes before it
 * fit (one write always fits an empty budget), and gives its bytes back when Netty has written
 * and released it.
 *
 * <p>Each write is copied once into a direct buffer of its own: Netty would copy heap bytes into a
 * direct buffer anyway (and release the heap one at once, long before the bytes leave), and only
 * a buffer Netty keeps until the socket took it tells when the bytes are gone.
 */
final class WriteBudget {

    /** The most bytes of frames copied into one write, unless one frame alone is larger. */
    static final int MAX_WRITE = 64 * 1024;

    private final long limit;
    private final DataBufferFactory buffers;
    // guarded by this: the stream admits one write at a time, so at most one waits
    private long outstanding;
    private @Nullable MonoSink<Void> waiting;
    private long waitingFor;

    WriteBudget(long limit, DataBufferFactory buffers) {
        this.limit = limit;
        this.buffers = buffers;
    }

    /** Frames, in order, cut into runs of at most {@link #MAX_WRITE} bytes (a larger frame alone). */
    static List<List<byte[]>> writes(List<byte[]> frames) {
        List<List<byte[]>> writes = new ArrayList<>();
        List<byte[]> current = new ArrayList<>();
        long bytes = 0;
        for (byte[] frame : frames) {
            if (!current.isEmpty() && bytes + frame.length > MAX_WRITE) {
                writes.add(current);
                current = new ArrayList<>();
                bytes = 0;
            }
            current.add(frame);
            bytes += frame.length;
        }
        if (!current.isEmpty()) {
            writes.add(current);
        }
        return writes;
    }

    /** The frames as one buffer, once the bytes already out leave room for them. */
    Mono<DataBuffer> admit(List<byte[]> frames) {
        int size = frames.stream().mapToInt(frame -> frame.length).sum();
        if (!(buffers instanceof NettyDataBufferFactory netty)) {
            return Mono.fromSupplier(() -> { // not on Netty: nothing to count
                DataBuffer joined = buffers.allocateBuffer(size);
                frames.forEach(joined::write);
                return joined;
            });
        }
        return Mono.<Void>create(sink -> {
            boolean now;
            synchronized (this) {
                now = fits(size);
                if (now) {
                    outstanding += size;
                } else {
                    waiting = sink;
                    waitingFor = size;
                }
            }
            if (now) {
                sink.success();
            } else {
                sink.onCancel(this::forgetWaiting);
            }
        }).then(Mono.fromSupplier(() -> {
            ByteBuf copy = counted(size);
            frames.forEach(copy::writeBytes);
            return netty.wrap(copy);
        }));
    }

    private boolean fits(long bytes) {
        return outstanding == 0 || outstanding + bytes <= limit;
    }

    private synchronized void forgetWaiting() {
        waiting = null;
    }

    private void written(long bytes) {
        MonoSink<Void> wake = null;
        synchronized (this) {
            outstanding -= bytes;
            if (waiting != null && fits(waitingFor)) {
                outstanding += waitingFor;
                wake = waiting;
                waiting = null;
            }
        }
        if (wake != null) {
            wake.success();
        }
    }

    /** A direct buffer that gives its bytes back to the budget when Netty releases it. */
    private ByteBuf counted(int size) {
        return new UnpooledDirectByteBuf(UnpooledByteBufAllocator.DEFAULT, size, size) {
            @Override
            protected void deallocate() {
                super.deallocate();
                written(size);
            }
        };
    }
}
