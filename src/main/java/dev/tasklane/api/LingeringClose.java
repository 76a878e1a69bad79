package dev.tasklane.api;

import java.util.concurrent.TimeUnit;

import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.socket.DuplexChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Closes connections as RFC 9112 §9.6 asks. The server often answers before it has read the
 * request body (401, 404, 405, 415, 413) and then closes, when the client sent
 * {@code Connection: close} or the body cannot be skipped. Closing at once, with the body's
 * bytes unread or still arriving, makes the kernel answer them with a reset, and the reset can
 * destroy the answer before the client reads it: a quarter to a half of such answers were lost.
 * Instead the server shuts its output down (the client reads the whole answer, then the end of
 * the stream), reads and drops whatever still arrives, and closes when the client closes its
 * side, or after {@link #LINGER_MILLIS} at the latest.
 */
@Configuration(proxyBeanMethods = false)
class LingeringClose {

    static final long LINGER_MILLIS = 2_000;

    @Bean
    NettyServerCustomizer closeConnectionsLingering() {
        return server -> server.doOnChannelInit((observer, channel, remoteAddress) ->
                channel.pipeline().addFirst("tasklane.lingeringClose", new Handler()));
    }

    /** First in the pipeline, so that every close passes it and it sees the bytes before the codec does. */
    private static final class Handler extends ChannelDuplexHandler {

        // Touched on the channel's event loop only.
        private boolean lingering;

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
            Channel channel = ctx.channel();
            if (lingering) {
                channel.closeFuture().addListener(closed -> promise.trySuccess());
                return;
            }
            if (!(channel instanceof DuplexChannel duplex) || !channel.isActive() || duplex.isInputShutdown()
                    || duplex.isOutputShutdown()) {
                ctx.close(promise);
                return;
            }
            lingering = true;
            // The channel's close completes the caller's promise (the listener below), whoever
            // closes it; the closes here carry promises of their own. Netty completes the promise
            // it is handed after the close's listeners have run, and one completed twice is logged
            // as a warning: on every connection a client reset, since the shutdown then fails.
            ScheduledFuture<?> deadline = ctx.executor().schedule(() -> ctx.close(), LINGER_MILLIS,
                    TimeUnit.MILLISECONDS);
            channel.closeFuture().addListener(closed -> {
                deadline.cancel(false);
                promise.trySuccess();
            });
            duplex.shutdownOutput().addListener(shut -> {
                if (!shut.isSuccess()) {
                    ctx.close();
                }
            });
            // The client's end of stream closes the channel (half-closure is not allowed): read until then.
            channel.config().setAutoRead(true);
            ctx.read();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            if (lingering) {
                ReferenceCountUtil.release(message);
                return;
            }
            ctx.fireChannelRead(message);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (!lingering) {
                ctx.fireChannelReadComplete();
            }
        }
    }
}
