CREATE TABLE "cart_items" (
	"id" serial PRIMARY KEY NOT NULL,
	"cart_id" integer NOT NULL,
	"product_id" integer NOT NULL,
	"quantity" integer NOT NULL,
	"price_at_add" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "carts" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"touched_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_items" (
	"id" serial PRIMARY KEY NOT NULL,
	"order_id" integer NOT NULL,
	"product_id" integer,
	"product_uuid" uuid NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"unit_price" integer NOT NULL,
	"quantity" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"number" integer NOT NULL,
	"status" text NOT NULL,
	"email" text NOT NULL,
	"name" text NOT NULL,
	"address" jsonb,
	"note" text,
	"currency" text NOT NULL,
	"subtotal" integer NOT NULL,
	"total" integer NOT NULL,
	"cart_id" integer,
	"idempotency_key" text,
	"stock_reserved" boolean NOT NULL,
	"payment_account" text,
	"payment_url" text,
	"payment_ref" text,
	"payment_error" text,
	"cancel_reason" text,
	"paid_at" timestamp with time zone,
	"fulfilled_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "products" (
	"id" serial PRIMARY KEY NOT NULL,
	"uuid" uuid NOT NULL,
	"space_id" integer NOT NULL,
	"slug" text NOT NULL,
	"name" jsonb NOT NULL,
	"description" jsonb NOT NULL,
	"price" integer NOT NULL,
	"currency" text NOT NULL,
	"stock" integer,
	"active" boolean NOT NULL,
	"images" jsonb NOT NULL,
	"attributes" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "shop_settings" (
	"space_id" integer PRIMARY KEY NOT NULL,
	"currency" text,
	"success_url" text,
	"cancel_url" text,
	"next_order_number" integer DEFAULT 1001 NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_events" (
	"provider" text NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"space_id" integer,
	"processed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payment_events_provider_event_id_pk" PRIMARY KEY("provider","event_id")
);
--> statement-breakpoint
CREATE TABLE "payment_stripe_accounts" (
	"space_id" integer PRIMARY KEY NOT NULL,
	"secret_key_sealed" text NOT NULL,
	"webhook_secret_sealed" text NOT NULL,
	"secret_key_hint" text NOT NULL,
	"webhook_secret_hint" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "cart_items" ADD CONSTRAINT "cart_items_cart_id_carts_id_fk" FOREIGN KEY ("cart_id") REFERENCES "public"."carts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cart_items" ADD CONSTRAINT "cart_items_product_id_products_id_fk" FOREIGN KEY ("product_id") REFERENCES "public"."products"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "carts" ADD CONSTRAINT "carts_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "order_items" ADD CONSTRAINT "order_items_order_id_orders_id_fk" FOREIGN KEY ("order_id") REFERENCES "public"."orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "orders" ADD CONSTRAINT "orders_cart_id_carts_id_fk" FOREIGN KEY ("cart_id") REFERENCES "public"."carts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "products" ADD CONSTRAINT "products_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shop_settings" ADD CONSTRAINT "shop_settings_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_stripe_accounts" ADD CONSTRAINT "payment_stripe_accounts_space_id_spaces_id_fk" FOREIGN KEY ("space_id") REFERENCES "public"."spaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cart_items_cart_product_key" ON "cart_items" USING btree ("cart_id","product_id");--> statement-breakpoint
CREATE UNIQUE INDEX "carts_uuid_key" ON "carts" USING btree ("uuid");--> statement-breakpoint
CREATE INDEX "carts_touched_at_idx" ON "carts" USING btree ("touched_at");--> statement-breakpoint
CREATE INDEX "order_items_order_idx" ON "order_items" USING btree ("order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "orders_uuid_key" ON "orders" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "orders_space_number_key" ON "orders" USING btree ("space_id","number");--> statement-breakpoint
CREATE UNIQUE INDEX "orders_cart_key" ON "orders" USING btree ("cart_id");--> statement-breakpoint
CREATE INDEX "orders_space_created_idx" ON "orders" USING btree ("space_id","created_at");--> statement-breakpoint
CREATE INDEX "orders_unpaid_idx" ON "orders" USING btree ("created_at") WHERE status = 'pending' and stock_reserved and payment_account is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "products_uuid_key" ON "products" USING btree ("uuid");--> statement-breakpoint
CREATE UNIQUE INDEX "products_space_slug_key" ON "products" USING btree ("space_id","slug");