package dev.tasklane.api;

import java.util.List;
import java.util.regex.Pattern;
import java.util.function.Consumer;

import dev.tasklane.config.StatementAbandonedException;
import dev.tasklane.queue.IllegalTransitionException;
import dev.tasklane.queue.TaskNotFoundException;
import dev.tasklane.support.StorableText;
import io.r2dbc.spi.R2dbcException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.transaction.CannotCreateTransactionException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.reactive.result.method.annotation.ResponseEntityExceptionHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;

/**
 * The one place where failures become RFC 9457 problems: the service's own exceptions here,
 * and the framework's (400, 404, 405, 415, ...) through the superclass.
 */
@RestControllerAdvice
class ApiExceptionHandler extends ResponseEntityExceptionHandler {

    private static final Logger log = LoggerFactory.getLogger(ApiExceptionHandler.class);
    private static final String CONNECTION_FAILURE = "08006";
    private static final Pattern ENQUEUE_PATH = Pattern.compile("/api/v1/queues/[^/]+/tasks(/batch)?");

    @ExceptionHandler
    ResponseEntity<ProblemDetail> invalid(InvalidRequestException e) {
        return problem(HttpStatus.UNPROCESSABLE_CONTENT, "Invalid request", e.getMessage(), e.errors());
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> malformed(MalformedRequestException e) {
        return problem(HttpStatus.BAD_REQUEST, "Malformed request", e.getMessage(), List.of(e.error()));
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> tooLarge(PayloadTooLargeException e) {
        return problem(HttpStatus.CONTENT_TOO_LARGE, "Payload too large", e.getMessage(), List.of());
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> requestTooLarge(DataBufferLimitException e) {
        return withHeaders(problem(HttpStatus.CONTENT_TOO_LARGE, "Request too large",
                "The request body is larger than the configured limit", List.of()),
                headers -> headers.set(HttpHeaders.CONNECTION, "close"));
    }

    /** Only an uncompressed body is read; the compressed one was not read, so the connection closes. */
    @ExceptionHandler
    ResponseEntity<ProblemDetail> compressed(CompressedBodyException e) {
        return withHeaders(problem(HttpStatus.UNSUPPORTED_MEDIA_TYPE, "Unsupported content encoding", e.getMessage(),
                List.of()), headers -> {
                    headers.set(HttpHeaders.ACCEPT_ENCODING, "identity");
                    headers.set(HttpHeaders.CONNECTION, "close");
                });
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> notFound(NotFoundException e) {
        return problem(HttpStatus.NOT_FOUND, e.title(), e.getMessage(), List.of());
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> notFound(TaskNotFoundException e) {
        return problem(HttpStatus.NOT_FOUND, "Task not found", e.getMessage(), List.of());
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> conflict(IllegalTransitionException e) {
        ResponseEntity<ProblemDetail> response =
                problem(HttpStatus.CONFLICT, "Task state does not allow this", e.getMessage(), List.of());
        response.getBody().setProperty("state", e.state().wireName());
        return response;
    }

    @ExceptionHandler
    ResponseEntity<ProblemDetail> tooManyStreams(TooManyStreamsException e) {
        return withHeaders(problem(HttpStatus.SERVICE_UNAVAILABLE, "Too many event streams", e.getMessage(), List.of()),
                headers -> headers.set(HttpHeaders.RETRY_AFTER, "5"));
    }

    /**
     * A failure the database reported (a statement ended by its own timeout, no connection to be
     * had) left nothing behind: retrying is safe. A statement the database did not answer at all,
     * or whose connection closed under it, may have taken effect, so a call that changes something
     * says that its outcome is unknown, and the idempotency key that makes the retry safe.
     */
    @ExceptionHandler({DataAccessResourceFailureException.class, TransientDataAccessException.class,
            CannotCreateTransactionException.class})
    ResponseEntity<ProblemDetail> databaseUnavailable(RuntimeException e, ServerWebExchange exchange) {
        log.warn("Database unavailable: {}", e.getMessage());
        HttpMethod method = exchange.getRequest().getMethod();
        String path = exchange.getRequest().getPath().value();
        // A claim that went unanswered is released once its statement has ended (ClaimHandoff):
        // nothing of it is left to be unknown.
        boolean changes = !HttpMethod.GET.equals(method) && !HttpMethod.HEAD.equals(method) && !path.endsWith("/claims");
        if (changes && outcomeUnknown(e)) {
            boolean enqueue = ENQUEUE_PATH.matcher(path).matches();
            String key = exchange.getRequest().getHeaders().getFirst(TaskController.IDEMPOTENCY_KEY_HEADER);
            ResponseEntity<ProblemDetail> unknown = problem(HttpStatus.SERVICE_UNAVAILABLE, "Outcome unknown",
                    "The database did not answer within the statement timeout, or the connection closed under the"
                            + " statement, so whether this change was made is unknown. " + (enqueue
                            ? "Retrying is safe with the same idempotency key (the Idempotency-Key header or"
                                    + " idempotencyKey); without one, read the queue first."
                            : "Read the state before retrying."), List.of());
            unknown.getBody().setProperty("outcome", "unknown");
            return withHeaders(unknown, headers -> {
                headers.set(HttpHeaders.RETRY_AFTER, "1");
                if (key != null && enqueue) {
                    headers.set(TaskController.IDEMPOTENCY_KEY_HEADER, key);
                }
            });
        }
        return withHeaders(problem(HttpStatus.SERVICE_UNAVAILABLE, "Database unavailable",
                "The database cannot be reached right now; retry shortly", List.of()),
                headers -> headers.set(HttpHeaders.RETRY_AFTER, "1"));
    }

    /**
     * A statement that went unanswered, or whose connection broke before its answer came: the
     * driver's connection failures carry SQLSTATE 08006, which PostgreSQL's own refusals never do.
     */
    private static boolean outcomeUnknown(Throwable failure) {
        if (StatementAbandonedException.causedBy(failure)) {
            return true;
        }
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof R2dbcException r2dbc && CONNECTION_FAILURE.equals(r2dbc.getSqlState())) {
                return true;
            }
        }
        return false;
    }

    /**
     * A body that is not JSON says where and why, as Jackson found it, instead of the framework's
     * "Failed to read HTTP message"; the reason may quote the offending token, but never an excerpt
     * of the source around it.
     */
    @Override
    protected Mono<ResponseEntity<Object>> handleServerWebInputException(ServerWebInputException e, HttpHeaders headers,
                                                                         HttpStatusCode status, ServerWebExchange exchange) {
        if ("No request body".equals(e.getReason())) {
            e.getBody().setTitle("Malformed request");
            e.getBody().setDetail("The body is empty; this call takes a JSON object");
        }
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof JacksonException json) {
                TokenStreamLocation at = json.getLocation();
                String where = at == null || at.getLineNr() < 0 ? ""
                        : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")";
                String why = String.valueOf(json.getOriginalMessage());
                int source = why.indexOf(" (start marker at");
                e.getBody().setTitle("Malformed request");
                e.getBody().setDetail("The body is not valid JSON" + where + ": "
                        + StorableText.sanitize(source < 0 ? why : why.substring(0, source), 300));
                break;
            }
        }
        return super.handleServerWebInputException(e, headers, status, exchange);
    }

    /**
     * Every problem carries a detail, also those the framework builds without one. A body too
     * large to read was not read to its end, so the connection cannot carry another request.
     */
    @Override
    protected Mono<ResponseEntity<Object>> createResponseEntity(@Nullable Object body, HttpHeaders headers,
                                                                HttpStatusCode status, ServerWebExchange exchange) {
        if (body instanceof ProblemDetail problem && problem.getDetail() == null) {
            problem.setDetail(problem.getTitle() != null ? problem.getTitle() : "Request failed");
        }
        HttpHeaders responseHeaders = new HttpHeaders();
        responseHeaders.addAll(headers);
        if (body instanceof ProblemDetail) {
            // Whatever the request accepts: an error is a problem, and the writer honours a set type.
            responseHeaders.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        }
        if (status.value() == HttpStatus.CONTENT_TOO_LARGE.value()) {
            responseHeaders.set(HttpHeaders.CONNECTION, "close");
        }
        return super.createResponseEntity(body, responseHeaders, status, exchange);
    }

    /** The same problem, with headers of its own besides its content type. */
    private static ResponseEntity<ProblemDetail> withHeaders(ResponseEntity<ProblemDetail> problem,
                                                             Consumer<HttpHeaders> headers) {
        return ResponseEntity.status(problem.getStatusCode()).contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .headers(headers).body(problem.getBody());
    }

    private static ResponseEntity<ProblemDetail> problem(HttpStatus status, String title, String detail,
                                                         List<FieldError> errors) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
        problem.setTitle(title);
        if (!errors.isEmpty()) {
            problem.setProperty("errors", errors);
        }
        return ResponseEntity.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(problem);
    }
}
