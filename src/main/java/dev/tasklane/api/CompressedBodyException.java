package dev.tasklane.api;

/** A request body sent with a content coding the service does not decode: a 415. */
final class CompressedBodyException extends RuntimeException {

    CompressedBodyException(String contentEncoding) {
        super("The body is sent with Content-Encoding: " + contentEncoding
                + ", which this service does not decode; send it uncompressed");
    }
}
