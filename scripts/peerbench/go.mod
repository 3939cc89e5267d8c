module github.com/wsrkit/wsrkit/scripts/peerbench

go 1.26

require github.com/rabbitmq/amqp091-go v1.16.0
