package dev.tasklane;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/** Starts one tasklane replica: HTTP API, event streams, in-process workers and maintenance. */
@SpringBootApplication
@ConfigurationPropertiesScan
public class TasklaneApplication {

    public static void main(String[] args) {
        SpringApplication.run(TasklaneApplication.class, args);
    }
}
