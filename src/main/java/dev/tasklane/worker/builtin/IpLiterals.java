package dev.tasklane.worker.builtin;

import java.net.InetAddress;
import java.net.UnknownHostException;

import io.netty.util.NetUtil;
import org.jspecify.annotations.Nullable;

/** IP address literals, parsed without ever asking DNS (InetAddress.getByName would, for names). */
final class IpLiterals {

    private IpLiterals() {
    }

    /** The address if {@code host} is an IPv4 or IPv6 literal (brackets allowed), else null. */
    static @Nullable InetAddress parse(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(bare);
        if (bytes == null) {
            return null;
        }
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
