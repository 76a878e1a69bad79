package dev.tasklane.worker.builtin;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;

import io.netty.resolver.AbstractAddressResolver;
import io.netty.resolver.AddressResolver;
import io.netty.resolver.AddressResolverGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

/**
 * Resolves names without blocking (Netty's DNS resolver) and refuses, before any connection is
 * made, an address the {@link AddressPolicy} does not allow. Checking the resolved address, not
 * the name, is what stops a name that points at 127.0.0.1 or the metadata service.
 */
final class PolicyResolverGroup extends AddressResolverGroup<InetSocketAddress> {

    /** The address a request would go to is refused. */
    static final class RefusedAddressException extends RuntimeException {

        RefusedAddressException(String message) {
            super(message);
        }
    }

    private final AddressResolverGroup<InetSocketAddress> delegate;
    private final AddressPolicy policy;

    PolicyResolverGroup(AddressResolverGroup<InetSocketAddress> delegate, AddressPolicy policy) {
        this.delegate = delegate;
        this.policy = policy;
    }

    @Override
    protected AddressResolver<InetSocketAddress> newResolver(EventExecutor executor) {
        AddressResolver<InetSocketAddress> inner = delegate.getResolver(executor);
        return new AbstractAddressResolver<>(executor, InetSocketAddress.class) {

            @Override
            protected boolean doIsResolved(InetSocketAddress address) {
                return false; // literals too go through doResolve, and so through the policy
            }

            @Override
            protected void doResolve(InetSocketAddress unresolved, Promise<InetSocketAddress> promise) {
                inner.resolve(unresolved).addListener((Future<InetSocketAddress> resolved) -> {
                    if (!resolved.isSuccess()) {
                        promise.tryFailure(resolved.cause());
                    } else if (allowed(unresolved, resolved.getNow())) {
                        promise.trySuccess(resolved.getNow());
                    } else {
                        promise.tryFailure(refused(unresolved, resolved.getNow()));
                    }
                });
            }

            @Override
            protected void doResolveAll(InetSocketAddress unresolved, Promise<List<InetSocketAddress>> promise) {
                inner.resolveAll(unresolved).addListener((Future<List<InetSocketAddress>> resolved) -> {
                    if (!resolved.isSuccess()) {
                        promise.tryFailure(resolved.cause());
                        return;
                    }
                    for (InetSocketAddress address : resolved.getNow()) {
                        if (!allowed(unresolved, address)) {
                            promise.tryFailure(refused(unresolved, address));
                            return;
                        }
                    }
                    promise.trySuccess(resolved.getNow());
                });
            }

            @Override
            public void close() {
                inner.close();
            }
        };
    }

    private boolean allowed(InetSocketAddress requested, SocketAddress resolved) {
        return policy.allowsHost(requested.getHostString())
                || (resolved instanceof InetSocketAddress address && address.getAddress() != null
                && policy.allows(address.getAddress()));
    }

    private static RefusedAddressException refused(InetSocketAddress requested, InetSocketAddress resolved) {
        return new RefusedAddressException("refused: " + requested.getHostString() + " resolves to "
                + resolved.getAddress().getHostAddress() + ", a loopback, private, link-local or metadata address"
                + " (TASKLANE_HTTP_ALLOWED_HOSTS can allow it)");
    }

    @Override
    public void close() {
        super.close();
        delegate.close();
    }
}
