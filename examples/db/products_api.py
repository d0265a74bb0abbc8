import os
from contextlib import asynccontextmanager
from typing import Literal

import asyncpg
import uvicorn
from fastapi import FastAPI, HTTPException, Query, Response
from pydantic import BaseModel, Field

class Product(BaseModel):
    name: str = Field(min_length=1, max_length=80)
    stock: int = Field(ge=0)
    kind: Literal["tool", "part", "kit"] = "part"


@asynccontextmanager
async def lifespan(app: FastAPI):
    app.state.pool = await asyncpg.create_pool(os.environ["DSN"], max_size=4)
    await app.state.pool.execute(
        "CREATE TABLE IF NOT EXISTS products (id serial PRIMARY KEY, name text NOT NULL,"
        " stock int NOT NULL, kind text NOT NULL)")
    yield
    await app.state.pool.close()


app = FastAPI(lifespan=lifespan)


def found(row):
    if row is None:
        raise HTTPException(404, "no such product")
    return dict(row)


@app.get("/products")
async def list_products(after: int = Query(0, ge=0), limit: int = Query(10, ge=1, le=100)):
    rows = await app.state.pool.fetch(
        "SELECT * FROM products WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
    return [dict(row) for row in rows]


@app.get("/products/{product_id}")
async def get_product(product_id: int):
    return found(await app.state.pool.fetchrow("SELECT * FROM products WHERE id = $1", product_id))


@app.post("/products", status_code=201)
async def create_product(p: Product):
    return dict(await app.state.pool.fetchrow(
        "INSERT INTO products (name, stock, kind) VALUES ($1, $2, $3) RETURNING *",
        p.name, p.stock, p.kind))


@app.put("/products/{product_id}")
async def update_product(product_id: int, p: Product):
    return found(await app.state.pool.fetchrow(
        "UPDATE products SET name = $2, stock = $3, kind = $4 WHERE id = $1 RETURNING *",
        product_id, p.name, p.stock, p.kind))


@app.delete("/products/{product_id}", status_code=204)
async def delete_product(product_id: int):
    if await app.state.pool.execute("DELETE FROM products WHERE id = $1", product_id) == "DELETE 0":
        raise HTTPException(404, "no such product")
    return Response(status_code=204)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", "8000")))
