package dev.tasklane.worker.builtin;

import java.math.BigInteger;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Which addresses {@code http} tasks may reach. Loopback, private, link-local (the cloud metadata
 * service lives there), unique-local, unspecified and multicast addresses are refused, unless
 * {@code TASKLANE_HTTP_ALLOWED_HOSTS} names the host or a CIDR range that holds the address.
 */
final class AddressPolicy {

    private record Range(BigInteger network, int prefix, int bits) {

        boolean contains(InetAddress address) {
            byte[] bytes = address.getAddress();
            if (bytes.length * 8 != bits) {
                return false;
            }
            BigInteger value = new BigInteger(1, bytes);
            return value.shiftRight(bits - prefix).equals(network.shiftRight(bits - prefix));
        }
    }

    private final List<String> hosts = new ArrayList<>();
    private final List<Range> ranges = new ArrayList<>();

    AddressPolicy(List<String> allowed) {
        for (String entry : allowed) {
            Range range = parseRange(entry);
            if (range != null) {
                ranges.add(range);
            } else {
                hosts.add(entry.toLowerCase(Locale.ROOT));
            }
        }
    }

    /** True when the host name itself is allowed, whatever it resolves to. */
    boolean allowsHost(String host) {
        return hosts.contains(host.toLowerCase(Locale.ROOT));
    }

    /** True when a request to this address may be made. */
    boolean allows(InetAddress address) {
        return !isInternal(address) || ranges.stream().anyMatch(r -> r.contains(address));
    }

    static boolean isInternal(InetAddress address) {
        if (address instanceof Inet6Address v6 && v6.isIPv4CompatibleAddress()) {
            return isInternal(toIpv4(v6.getAddress()));
        }
        byte[] bytes = address.getAddress();
        if (bytes.length == 16 && (isIpv4Mapped(bytes) || isNat64(bytes))) {
            return isInternal(toIpv4(bytes));
        }
        if (bytes.length == 16 && bytes[0] == 0x20 && bytes[1] == 0x02) {
            // 6to4 (2002::/16): the IPv4 address is in bytes 2..5, and a relay would deliver there
            return isInternal(ipv4(bytes[2], bytes[3], bytes[4], bytes[5]));
        }
        boolean uniqueLocal = bytes.length == 16 && (bytes[0] & 0xfe) == 0xfc;
        boolean sharedOrZero = address instanceof Inet4Address
                && ((bytes[0] & 0xff) == 0 || ((bytes[0] & 0xff) == 100 && (bytes[1] & 0xc0) == 64));
        return address.isLoopbackAddress() || address.isSiteLocalAddress() || address.isLinkLocalAddress()
                || address.isAnyLocalAddress() || address.isMulticastAddress() || uniqueLocal || sharedOrZero;
    }

    private static boolean isIpv4Mapped(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    }

    /** The well-known NAT64 prefix 64:ff9b::/96: a translator delivers to the IPv4 address in its last 4 bytes. */
    private static boolean isNat64(byte[] bytes) {
        if (bytes[0] != 0 || bytes[1] != 0x64 || bytes[2] != (byte) 0xff || bytes[3] != (byte) 0x9b) {
            return false;
        }
        for (int i = 4; i < 12; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static InetAddress toIpv4(byte[] v6) {
        return ipv4(v6[12], v6[13], v6[14], v6[15]);
    }

    private static InetAddress ipv4(byte a, byte b, byte c, byte d) {
        try {
            return InetAddress.getByAddress(new byte[] {a, b, c, d});
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static @Nullable Range parseRange(String entry) {
        String[] parts = entry.split("/", 2);
        InetAddress address = IpLiterals.parse(parts[0]);
        if (address == null) {
            return null;
        }
        int bits = address.getAddress().length * 8;
        int prefix = parts.length == 2 ? Integer.parseInt(parts[1]) : bits;
        if (prefix < 0 || prefix > bits) {
            throw new IllegalArgumentException("TASKLANE_HTTP_ALLOWED_HOSTS entry '" + entry + "' has a bad prefix");
        }
        return new Range(new BigInteger(1, address.getAddress()), prefix, bits);
    }
}
